"""xjax.extend.core (jax.extend.core): primitives, jaxprs and traces, for libraries that define
their own primitives or interpret jaxprs.

Names of JAX's jax.extend.core that xjax has no counterpart of (tokens, effects, call primitives,
symbolic dimensions) are left out, so that code probing for them sees that they are missing.
"""
import numpy as _np

from xjax._src import core as _core, errors as _errors
from xjax._src.core import (Primitive, TraceTag, find_top_trace, get_opaque_trace_state,  # noqa: F401
                            set_current_trace, take_current_trace)
from xjax._src.interpreters.ad import float0 as _float0, is_differentiable as _is_differentiable
from xjax._src.jaxpr import (ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var,  # noqa: F401
                             eval_jaxpr as _eval_jaxpr, jaxprs_in_params)
from xjax.extend.core import primitives  # noqa: F401

Effect = object  # the base of effect types; xjax's primitives have none
Effects = frozenset
no_effects = frozenset()
array_types = frozenset()  # filled below, once xjax's Array type is known


class JaxprTypeError(TypeError):
    """A jaxpr that is not well typed (check_jaxpr)."""


def jaxpr_as_fun(closed_jaxpr, *args):
    """The function a ClosedJaxpr computes (called with args: its outputs, as JAX's curried form)."""

    def fun(*args):
        return _eval(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)

    return fun(*args) if args else fun


def _eval(jaxpr, consts, *args):
    return _eval_jaxpr(jaxpr, consts, *args)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None, ctx=None):
    if effects:
        raise NotImplementedError(f"new_jaxpr_eqn: effects ({effects}) are not supported by xjax")
    return JaxprEqn(list(invars), list(outvars), primitive, dict(params))


def gensym(suffix=""):
    """A maker of fresh variables: gensym()(aval) -> Var (xjax names variables when printing)."""
    del suffix
    return Var


def subjaxprs(jaxpr):
    """The jaxprs held by jaxpr's equations' params (not descending into them)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def mapped_aval(size, axis, aval):
    """The aval of one element of a value mapped along `axis` (None: not mapped)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has size {aval.shape[axis]}, not {size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size, axis, aval, explicit_mesh_axis=None):
    """The aval of `size` values of `aval` stacked along `axis` (None: not mapped)."""
    del explicit_mesh_axis
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def call_impl(f, *args, **params):
    """Calls the WrappedFun f eagerly."""
    del params
    with set_current_trace(_core.EVAL_TRACE):
        return f.call_wrapped(*args)


def concrete_or_error(force, val, context=""):
    """force(val's concrete value) (or the value itself when force is None); a traced value with no
    concrete value raises ConcretizationTypeError."""
    if isinstance(val, _core.Tracer):
        concrete = val.to_concrete_value()
        if concrete is None:
            raise _errors.ConcretizationTypeError(val, f"The problem arose with the `{context}` argument."
                                                 if context else "")
        val = concrete
    return val if force is None else force(val)


def primal_dtype_to_tangent_dtype(primal_dtype):
    return _np.dtype(primal_dtype) if _is_differentiable(_np.dtype(primal_dtype)) else _float0


def valid_jaxtype(x):
    try:
        _core.get_aval(x)
    except TypeError:
        return False
    return True


def check_jaxpr(jaxpr):
    """Raises JaxprTypeError unless every variable is defined before use, once, and every equation's
    output types are what its primitive's abstract_eval gives."""
    defined = set(jaxpr.constvars)

    def define(v):
        if v in defined:
            raise JaxprTypeError(f"Variable '{v}' already bound")
        defined.add(v)

    def read(a):
        if type(a) is not Literal and a not in defined:
            raise JaxprTypeError(f"Variable '{a}' not defined")
        return a.aval

    for v in jaxpr.invars:
        define(v)
    for eqn in jaxpr.eqns:
        in_avals = [read(a) for a in eqn.invars]
        rule = eqn.primitive.abstract_eval
        if rule is not None:
            out = rule(*in_avals, **eqn.params)
            out = list(out) if eqn.primitive.multiple_results else [out]
            got = [v.aval for v in eqn.outvars]
            if [(a.shape, a.dtype) for a in out] != [(a.shape, a.dtype) for a in got]:
                raise JaxprTypeError(f"'{eqn.primitive.name}' outputs {got}, but its rule gives {out}")
        for v in eqn.outvars:
            define(v)
    for a in jaxpr.outvars:
        read(a)


def __getattr__(name):
    if name == "array_types":  # the Array type is known once xjax has loaded
        return frozenset(_core.ARRAY_TYPES) | {_np.ndarray, _np.generic, bool, int, float, complex}
    raise AttributeError(f"module 'jax.extend.core' has no attribute '{name}'")


del array_types
