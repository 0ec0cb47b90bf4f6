"""linear_transpose: the transpose of a linear function, from its jaxpr and the primitives'
transpose rules (the backward pass reverse mode uses), without evaluating the function."""
import functools

import numpy as np

from xjax._src import core, dtypes, tree_util
from xjax._src.interpreters import ad
from xjax._src.make_jaxpr import _trace_for


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun` at arguments shaped like `primals` (arrays or
    ShapeDtypeStructs): a function of an output cotangent returning the tuple of input cotangents."""
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported (JAX removed it too)")
    closed, out_tree = _trace_for(fun, (), primals, {}, traced_for="linear_transpose")
    in_leaves, in_tree = tree_util.tree_flatten(primals)
    in_avals = closed.in_avals
    kinds = [a.dtype for a in (*in_avals, *closed.out_avals)]
    if not (all(dtypes.issubdtype(d, np.inexact) for d in kinds)
            or all(dtypes.issubdtype(d, np.integer) for d in kinds)):
        raise TypeError(f"linear_transpose only supports [float or complex] -> [float or complex], and integer -> "
                        f"integer functions, but got {[a.dtype for a in in_avals]} -> "
                        f"{[a.dtype for a in closed.out_avals]}.")
    transposed = functools.partial(_transposed, closed.jaxpr, in_tree, out_tree, tuple(in_avals),
                                   tuple(closed.out_avals))
    return tree_util.Partial(transposed, list(closed.consts))


def _transposed(jaxpr, in_tree, out_tree, in_avals, out_avals, consts, out_cotangent):
    cts, tree = tree_util.tree_flatten(out_cotangent)
    if tree != out_tree:
        raise TypeError(f"cotangent tree does not match function output: got {tree}, expected {out_tree}")
    for c, a in zip(cts, out_avals):
        got = core.get_aval(c)
        if got.shape != a.shape or dtypes.canonicalize_dtype(got.dtype) != a.dtype:
            raise TypeError(f"cotangent type does not match function output: got {got.str_short()}, expected "
                            f"{a.str_short()}")
    in_cts = ad.backward_pass(jaxpr, consts, cts)
    return tree_util.tree_unflatten(in_tree, [ad.instantiate(c) for c in in_cts])
