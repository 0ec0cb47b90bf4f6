"""Helpers for defining primitives: eager impl via the backend, lowering to one C++ op."""
import functools

import numpy as np

from xjax import _core
from xjax._src import core
from xjax._src.backends import cpu
from xjax._src.backends.lowering import LoweringContext
from xjax._src.placement import asarray  # noqa: F401 - lax's operands are placed as bind's are


def op_lowering(op_name, attrs=None):
    """A lowering rule emitting C++ op `op_name`; attrs(**params) maps params to C++ attributes."""

    def lower(ctx, *inputs, **params):
        return ctx.op(op_name, *inputs, **(attrs(**params) if attrs else params))

    return lower


def define_primitive(name, abstract_eval, op=None, attrs=None, multiple_results=False):
    """Creates a primitive that runs eagerly through the backend and lowers to C++ op `op`."""
    prim = core.Primitive(name, multiple_results)
    prim.abstract_eval = abstract_eval
    prim.impl = functools.partial(cpu.apply_primitive, prim)
    prim.lowering = op_lowering(op or name, attrs)
    return prim


def scalars_like(args):
    """Places Python scalars with the dtype of the first array argument (weakly typed)."""
    if all(type(a) in core.ARRAY_TYPES for a in args):  # the common case: nothing to place
        return args
    ref = next((a for a in args if not isinstance(a, (bool, int, float)) or isinstance(a, np.generic)), None)
    if ref is None:
        return [asarray(a) for a in args]
    ref_dtype = core.get_aval(ref).dtype
    return [asarray(a, ref_dtype, True) if isinstance(a, (int, float)) and not isinstance(a, (bool, np.generic))
            else asarray(a) for a in args]


def core_abstract_eval(op, attrs=None, weak=lambda avals: False):
    """Abstract evaluation by the C++ core's own shape rule for `op` (one source of truth).

    `weak(avals)` says whether the (first) result is weakly typed; core errors keep their type.
    """
    memo = {}  # tracing asks again and again for the same types: ask the core once (avals are immutable)

    def abstract_eval(*avals, **params):
        try:
            key = (avals, cpu._params_key(params))
            out = memo.get(key)
        except TypeError:  # an unhashable param
            key = out = None
        if out is not None:
            return list(out) if type(out) is tuple else out
        a = attrs(**params) if attrs else params
        outs = _core.infer(op, [(x.shape, x.dtype.name) for x in avals],
                           {k: LoweringContext.attr(v) for k, v in a.items() if v is not None})
        w = weak(avals)
        res = [core.ShapedArray(s, d, w if i == 0 else False) for i, (s, d) in enumerate(outs)]
        if key is not None:
            if len(memo) >= 1024:
                memo.clear()
            memo[key] = tuple(res) if len(res) > 1 else res[0]
        return res if len(res) > 1 else res[0]

    return abstract_eval


def define_core_primitive(name, op=None, attrs=None, weak=lambda avals: avals[0].weak_type if avals else False,
                          multiple_results=False):
    """A primitive whose shape rule and lowering are both the C++ op's (params -> attrs by `attrs`)."""
    op = op or name
    return define_primitive(name, core_abstract_eval(op, attrs, weak), op=op, attrs=attrs,
                            multiple_results=multiple_results)
