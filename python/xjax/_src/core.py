"""The tracing core: abstract values, primitives and `bind`, traces and tracers.

Every operation on arrays is a Primitive. `bind` hands it to the current trace: the EvalTrace
runs it (eagerly, through the backend); the transformations (jit tracing, jvp, vmap) install
their own Trace subclasses, so one primitive definition serves all of them.
"""
import contextlib
import operator
import threading
import weakref

import numpy as np

from xjax._src import dtypes, errors
from xjax._src.sharding import aval_sharding, check_trivial

_SHORT_NAMES = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "complex64": "c64",
    "complex128": "c128", "float8_e4m3fn": "f8_e4m3fn", "float8_e5m2": "f8_e5m2",
}


class AbstractValue:
    """What tracing knows of a value without its contents (the base of ShapedArray, as in JAX)."""

    __slots__ = ()


class ShapedArray(AbstractValue):
    """The abstract value of an array: static shape, dtype and weak type."""

    __slots__ = ("shape", "dtype", "weak_type", "vma", "_hash", "_sharding")

    def __init__(self, shape, dtype, weak_type=False, *, sharding=None, vma=()):
        if sharding is not None:  # JAX's avals carry a layout; xjax's values are whole on one device
            check_trivial(sharding, "ShapedArray")
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        # the manual mesh axes a value of a shard_map body (check_vma=True) may vary over, in mesh
        # order: JAX's varying manual axes, printed `f32[2]{V:x}` (see shard_map_body below)
        self.vma = tuple(vma)
        self._hash = hash((self.shape, self.dtype, self.weak_type, self.vma) if self.vma else
                          (self.shape, self.dtype, self.weak_type))  # avals key every dispatch cache
        self._sharding = None  # set by with_sharding only

    def with_sharding(self, sharding):
        """This type carrying the sharding of an array placed over a mesh (what jax.typeof shows):
        printed as JAX prints it (float32[8@X,4]), compared with the sharding."""
        out = ShapedArray(self.shape, self.dtype, self.weak_type, vma=self.vma)
        out._sharding = sharding
        out._hash = hash((self.shape, self.dtype, self.weak_type, self.vma, sharding))
        return out

    def with_vma(self, vma):
        """This type varying over the manual axes `vma` (mesh order) instead."""
        out = ShapedArray(self.shape, self.dtype, self.weak_type, vma=vma)
        return out if self._sharding is None else out.with_sharding(self._sharding)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def sharding(self):
        """As JAX's; for a value on one device: no dim split, over the empty mesh."""
        return aval_sharding(len(self.shape)) if self._sharding is None else self._sharding

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type, vma=self.vma)

    def _dims_text(self):
        """Each dimension with the mesh axes splitting it: `8@X`, `8@(X,Y)`, `4`."""
        spec = self._sharding.spec if self._sharding is not None else ()
        return ",".join(str(d) if p is None else f"{d}@{p}" if isinstance(p, str) else f"{d}@({','.join(p)})"
                        for d, p in zip(self.shape, list(spec) + [None] * (len(self.shape) - len(spec))))

    def _vma_text(self):
        return "" if not self.vma else "{V:" + (self.vma[0] if len(self.vma) == 1 else f"({','.join(self.vma)})") + "}"

    def str_short(self):
        """`f32[3,4]`, `f32[8@X,4]`, `f32[2]{V:(x,y)}`: the form jaxprs print."""
        return f"{_SHORT_NAMES[self.dtype.name]}[{self._dims_text()}]{self._vma_text()}"

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape and self.dtype == other.dtype
                and self.weak_type == other.weak_type and self.vma == other.vma and self._sharding == other._sharding)

    def __hash__(self):
        return self._hash

    def _long_str(self):
        """`float32[8@X,4]{V:y}`: the dtype's full name, each dimension with the mesh axes splitting it."""
        return f"{self.dtype.name}[{self._dims_text()}]{self._vma_text()}"

    def __repr__(self):  # as JAX's: ShapedArray(float32[3], weak_type=True)
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self._long_str()}{weak})"

    def __str__(self):  # as JAX's: float32[3], ~float32[] when weakly typed
        return ("~" if self.weak_type else "") + self._long_str()


class Primitive:
    """An operation with one definition site holding all its rules.

    The rules are declared fields, set through `def_rules` next to the primitive's definition:
      abstract_eval(*avals, **params) -> aval (or list of avals when multiple_results)
      impl(*arrays, **params): eager evaluation
      lowering(ctx, *values, **params) -> graph values; or jaxpr_lowering(lowerer, eqn, ins) for
        primitives holding jaxprs, with can_lower(params) saying whether the core can run them
      pp_params(eqn, ctx): how make_jaxpr prints the params
      jvp(primals, tangents, **params) -> (primal out, tangent out); tangents may be ad.Zero
      transpose(cts_out, *args, **params) -> cotangents of the args that are ad.UndefinedPrimal
      partial_eval(trace, args, **params): how a partial-evaluation trace splits the primitive
        into known and unknown parts (primitives holding jaxprs)
      batch: the vmap rule
      has_effect: kept by dead-code elimination even when its results are unused
      const_fold(*args, **params) -> value or None: what a jaxpr trace records instead of the
        equation when no argument is a tracer (JAX folds converts of literals so)
      vma(*avals, **params) -> the varying manual axes of each result (one tuple; a list of them
        when multiple_results), where they are not the union of the operands' (collectives; see
        shard_map_body)
      sharding(*avals, **params) -> the sharding of each result's type (a NamedSharding over the
        abstract mesh; a list when multiple_results), asked when an operand's type carries one
        (values traced from arrays split over Explicit mesh axes; lax/sharding_rules.py)
    """

    RULES = ("abstract_eval", "impl", "lowering", "jaxpr_lowering", "can_lower", "pp_params", "jvp",
             "transpose", "partial_eval", "batch", "has_effect", "const_fold", "vma",
             "sharding")
    __slots__ = ("name", "multiple_results", *RULES, "__weakref__")

    def __init__(self, name, multiple_results=False, **rules):
        self.name = name
        self.multiple_results = multiple_results
        for r in self.RULES:
            setattr(self, r, None)
        self.has_effect = False
        self.def_rules(**rules)
        _primitives.add(self)

    def def_rules(self, **rules):
        """Sets rules by name; an unknown name is an error (rules are declared, not ad hoc)."""
        for kind, rule in rules.items():
            if kind not in self.RULES:
                raise TypeError(f"Primitive '{self.name}': unknown rule kind {kind!r}; known: {', '.join(self.RULES)}")
            setattr(self, kind, rule)
        return self

    def bind(self, *args, **params):
        return _state.trace.process_primitive(self, args, params)

    # JAX's decorators for a primitive defined outside xjax (jax.extend.core.Primitive): each sets
    # one rule field and returns the function, as JAX's do.
    def def_impl(self, impl):
        self.impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        self.abstract_eval = abstract_eval
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        """A rule returning (avals, effects): xjax tracks no effects, so only pure rules are honoured."""

        def abstract_eval(*avals, **params):
            out, effects = effectful_abstract_eval(*avals, **params)
            if effects:
                raise NotImplementedError(f"Primitive '{self.name}': effects ({effects}) are not supported by xjax")
            return out

        self.abstract_eval = abstract_eval
        return effectful_abstract_eval

    def rule(self, kind, transformation=None):
        """The rule of the given kind, or a NotImplementedError naming primitive and transformation."""
        r = getattr(self, kind)
        if r is None:
            what = f" (needed by {transformation})" if transformation else ""
            raise NotImplementedError(f"Primitive '{self.name}' has no {kind} rule yet{what}")
        return r

    def __repr__(self):
        return self.name


_primitives = weakref.WeakSet()  # every primitive made (JAX's rule tables can be iterated)


def all_primitives():
    return list(_primitives)


class TraceTag:
    """The identity of one transformation: tracers of a trace with another tag are constants to it."""

    __slots__ = ()


class Trace:
    """Interprets primitives applied to its tracers.

    Traces are "stackless": each knows its parent (the trace that was current when it began) and
    runs its rules with the parent current, so the primitives a rule binds reach the parent. A value
    that is not one of this trace's tracers (a constant, a tracer of an enclosing trace) is lifted by
    the trace's own rules; a tracer whose trace has ended is a leak and raises UnexpectedTracerError.
    """

    def __init__(self, parent=None, tag=None):
        self.parent = parent
        self.tag = TraceTag() if tag is None else tag
        self.alive = True

    # Whether a custom_jvp/custom_vjp call bound here runs its Python function or rules directly
    # (evaluation and the transformations of values) rather than tracing the function to a jaxpr.
    runs_custom_calls_lazily = False

    def process_primitive(self, primitive, args, params):
        raise NotImplementedError

    def process_custom_call(self, primitive, args, params):
        """A custom_jvp/custom_vjp call bound with its Python function (JAX's process_custom_jvp_call and
        process_custom_vjp_call). By default the call is staged: its function traced to a jaxpr, and
        the staged primitive processed as any other."""
        ops, staged = primitive.stage(args, params)
        return self.process_primitive(primitive, ops, staged)

    @property
    def main(self):
        """The trace's identity under JAX's former name (libraries compare `tracer._trace.main`)."""
        return self.tag

    def bind_in_parent(self, primitive, args, params):
        """Binds the primitive with this trace's parent current."""
        with set_current_trace(self.parent):
            return primitive.bind(*args, **params)


class EvalTrace(Trace):
    """Runs primitives on concrete arrays."""

    runs_custom_calls_lazily = True

    def process_custom_call(self, primitive, args, params):
        for a in args:
            if isinstance(a, Tracer):
                raise a._escaped_error()
        return params["fun"](*args)  # the function itself runs (Python control flow on values works)

    def process_primitive(self, primitive, args, params):
        for a in args:
            if isinstance(a, Tracer):
                raise a._escaped_error()
        impl = primitive.impl
        if impl is None:
            primitive.rule("impl")
        return impl(*args, **params)


class ConcretizationError(TypeError):
    """Base of the errors raised when Python needs the value of a tracer that has none."""


class Tracer:
    """A value standing for an array inside a transformation; subclasses carry their trace's data.

    Python conversions (`bool`, `int`, `float`, `np.asarray`, ...) use the tracer's concrete value
    when it has one (a JVP tracer of a concrete primal does), and raise its trace's error otherwise.
    """

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

    def to_concrete_value(self):
        """The value this tracer stands for when it is known now, else None."""
        return None

    def _no_concrete_value(self, conversion, *args):
        """Raises the error of `conversion` (a method name such as '__bool__') without a value."""
        shape = self.aval.str_short()
        if conversion == "__bool__":
            raise ConcretizationError(
                f"Attempted boolean conversion of traced array with shape {shape}.\nThe error occurred while "
                "tracing a function; a traced value cannot be used where Python needs a concrete True/False "
                "(if, while, and/or).")
        if conversion == "__array__":
            raise ConcretizationError(
                f"The numpy.ndarray conversion method __array__() was called on traced array with shape {shape}. "
                "A traced value cannot become a NumPy array.")
        raise ConcretizationError(f"Abstract tracer value encountered where concrete value is expected: {self}\n"
                                  f"The problem arose with the `{conversion.strip('_')}` function.")

    def _convert(self, conversion, *args):
        value = self.to_concrete_value()
        if value is None:
            return self._no_concrete_value(conversion, *args)
        return getattr(value, conversion)(*args)

    def __bool__(self):
        return self._convert("__bool__")

    def __int__(self):
        return self._convert("__int__")

    def __float__(self):
        return self._convert("__float__")

    def __complex__(self):
        return self._convert("__complex__")

    def __index__(self):
        return self._convert("__index__")

    def __array__(self, *args, **kwargs):
        value = self.to_concrete_value()
        if value is None:
            return self._no_concrete_value("__array__")
        return value.__array__(*args, **kwargs)

    def item(self, *args):
        return self._convert("item", *args)

    def tolist(self):
        return self._convert("tolist")

    def __hash__(self):
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def _escaped_error(self):
        """The UnexpectedTracerError for this tracer used after its transformation ended."""
        return errors.escaped_tracer_error(self)


def to_concrete_value(x):
    """x's value when it is known now (arrays, Python and NumPy values, concrete tracers), else None."""
    if isinstance(x, Tracer):
        return x.to_concrete_value()
    return x


def is_concrete(x):
    return to_concrete_value(x) is not None


class _TraceState(threading.local):
    def __init__(self):
        self.trace = EVAL_TRACE
        self.axis_env = ()  # ((name, size), ...) of the named axes bound by enclosing vmap/pmap
        self.manual_axes = ()  # the manual mesh axes of the shard_map body being traced (mesh order)
        self.vma_axes = ()  # the same when that body has check_vma=True
        self.eager_constant_folding = False  # set by ensure_compile_time_eval


EVAL_TRACE = EvalTrace()
_state = _TraceState()


def current_trace():
    return _state.trace


def trace_state_clean():
    """Whether no transformation is in progress (JAX's name; NumPyro asks it)."""
    return _state.trace is EVAL_TRACE and not _state.axis_env


def find_top_trace(_):
    """The current trace (JAX's traces are stackless too, so the arguments do not choose it)."""
    return _state.trace


@contextlib.contextmanager
def take_current_trace():
    """Yields the current trace, which the block must not bind into (rules that hand values on to a
    trace of their choosing); a bind inside the block without set_current_trace is an error."""
    prev = _state.trace
    _state.trace = _NO_TRACE
    try:
        yield prev
    finally:
        _state.trace = prev


class _NoTrace(Trace):
    def process_primitive(self, primitive, args, params):
        raise RuntimeError(f"'{primitive.name}' was bound inside take_current_trace() without a current trace")


_NO_TRACE = _NoTrace()


def eval_context():
    """Binds run eagerly inside the block, whatever transformation is in progress."""
    return set_current_trace(EVAL_TRACE)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside the block, a jaxpr trace computes primitives whose operands are all concrete now
    (JAX's eager constant folding), so their results are concrete and usable in Python control flow."""
    prev, _state.eager_constant_folding = _state.eager_constant_folding, True
    try:
        yield
    finally:
        _state.eager_constant_folding = prev


def eager_constant_folding():
    return _state.eager_constant_folding


class OpaqueTraceState:
    """The identity of the trace current when it was taken, comparable with another's (Flax checks
    that a module is used in the trace it was created in)."""

    __slots__ = ("_trace_ref",)

    def __init__(self, trace):
        self._trace_ref = weakref.ref(trace)  # does not keep an ended trace alive

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

    def __hash__(self):
        return hash(self._trace_ref)


def get_opaque_trace_state(convention=None):
    del convention  # JAX's callers name themselves; the state is the same for all
    return OpaqueTraceState(_state.trace)


def min_dim(d1, d2):
    """min(d1, d2) for dimension sizes (xjax's shapes are always constant)."""
    return min(operator.index(d1), operator.index(d2))


def max_dim(d1, d2):
    """max(d1, d2) for dimension sizes (xjax's shapes are always constant)."""
    return max(operator.index(d1), operator.index(d2))


@contextlib.contextmanager
def set_current_trace(trace):
    """Makes `trace` interpret the primitives bound inside the block."""
    prev, _state.trace = _state.trace, trace
    try:
        yield
    finally:
        _state.trace = prev


@contextlib.contextmanager
def new_trace(trace):
    """Runs the block with `trace` current; the trace is dead afterwards (its tracers leak if kept)."""
    try:
        with set_current_trace(trace):
            yield trace
    finally:
        trace.alive = False


def get_aval(x):
    """The abstract value of an array, tracer, NumPy value or Python scalar."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    typeof_rule = getattr(type(x), "_typeof", None)  # a value whose type is not its data's (typed PRNG keys)
    if typeof_rule is not None:
        return typeof_rule(x)
    dtype, weak = dtypes.dtype_and_weak(x)  # (an object with __jax_array__: JAX's ValueError)
    return ShapedArray(np.shape(x), dtype, weak)


# ---- named axes ---------------------------------------------------------------------------------

@contextlib.contextmanager
def extend_axis_env(name, size):
    """Binds axis `name` (of `size`) for collectives inside the block; a None name binds nothing."""
    if name is None:
        yield
        return
    prev = _state.axis_env
    _state.axis_env = prev + ((name, size),)
    try:
        yield
    finally:
        _state.axis_env = prev


@contextlib.contextmanager
def shard_map_body(manual_axes, check_vma):
    """Inside: a shard_map body over the manual mesh axes `manual_axes` (mesh order) is traced. With
    check_vma its values' types carry the axes they vary over (ShapedArray.vma), as JAX's do: a
    jaxpr trace gives each result the union of its operands' axes, and first makes each operand
    that varies over fewer of them vary over all with a `pvary` equation (partial_eval)."""
    prev = _state.manual_axes, _state.vma_axes
    _state.manual_axes = tuple(manual_axes)
    _state.vma_axes = tuple(manual_axes) if check_vma else ()
    try:
        yield
    finally:
        _state.manual_axes, _state.vma_axes = prev


def vma_of_body(abstract_eval):
    """The vma rule of a primitive whose result types are its body's (jit, loops, cond): the manual
    axes its abstract_eval's types carry."""
    return lambda *avals, **params: [getattr(a, "vma", ()) for a in abstract_eval(*avals, **params)]


def manual_axes():
    """The manual mesh axes of the shard_map body traced now (empty elsewhere)."""
    return _state.manual_axes


def vma_axes():
    """The manual mesh axes of the check_vma body traced now (empty elsewhere)."""
    return _state.vma_axes


def mesh_ordered(axes):
    """The axes of the body traced now among `axes`, in mesh order."""
    return tuple(a for a in _state.vma_axes if a in axes)


def axis_env():
    """The named axes bound now, innermost last: a tuple of (name, size); part of trace cache keys."""
    return _state.axis_env


def axis_size(name):
    """The size of bound axis `name` (a name or tuple of names: the product); NameError if unbound."""
    if isinstance(name, (tuple, list)):
        n = 1
        for a in name:
            n *= axis_size(a)
        return n
    for bound, size in reversed(_state.axis_env):
        if bound == name:
            return size
    raise NameError(f"unbound axis name: {name}. The following axis names (e.g. defined by pmap or vmap) "
                    f"are available to collective operations: {[n for n, _ in _state.axis_env]}")
