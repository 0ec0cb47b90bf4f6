"""`vmap`: maps a function over an axis of its arguments by batching its primitives.

The arguments' mapped axes become BatchTracers of one BatchTrace (interpreters/batching.py); the
function runs once, each primitive it binds runs its batching rule, and the outputs' batch axes
are moved to out_axes.
"""
import collections
import functools

from xjax._src import core, data_leaves, tree_util
from xjax._src.interpreters import batching
from xjax._src.interpreters import partial_eval as pe
from xjax._src.placement import asarray


def _check_axis_spec(name, spec, api="vmap"):
    leaves = tree_util.tree_leaves(spec, is_leaf=lambda x: x is None)
    if not all(x is None or (isinstance(x, int) and not isinstance(x, bool)) for x in leaves):
        raise TypeError(f"{api} {name} must be an int, None, or (nested) container with those types as leaves, "
                        f"but got {spec}.")


def flatten_axes(name, tree, spec, api="vmap"):
    """One axis (int or None) per leaf of `tree`, from `spec`, a pytree prefix of it (errors name `api`)."""
    is_none = lambda x: x is None  # noqa: E731 - None is an axis spec, not an empty node
    leaves, treedef = tree_util.tree_flatten(spec, is_leaf=is_none)
    try:
        subtrees = treedef.flatten_up_to(tree)
    except ValueError as e:
        make = tree_util.where_not_prefix(spec, tree, is_none)
        detail = make(f"{api} {name}") if make is not None else str(e)
        raise ValueError(f"{api} {name} specification must be a tree prefix of the corresponding value; \n"
                         f"  Mismatch details (1 found):\n  {detail}") from None
    out = []
    for axis, sub in zip(leaves, subtrees):
        out.extend([axis] * tree_util.tree_structure(sub).num_leaves)
    return out


def _canonical_in_axis(axis, x, api="vmap"):
    ndim = core.get_aval(x).ndim
    if axis is None:
        return None
    if not -ndim <= axis < ndim:
        raise ValueError(f"{api} was requested to map its argument along axis {axis}, which implies that its rank "
                         f"should be at least {axis + 1 if axis >= 0 else -axis}, but is only {ndim} "
                         f"(its shape is {core.get_aval(x).shape})")
    return axis % ndim


def _type_str(aval):
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _axis_size(fun, args, kwargs, leaves, axes, axis_size, api="vmap"):
    """The mapped size, or JAX's ValueError listing each mapped axis and its size."""
    sizes = [core.get_aval(x).shape[a] for x, a in zip(leaves, axes) if a is not None]
    if axis_size is None and not sizes:
        if api == "pmap":
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        raise ValueError("vmap must have at least one non-None value in in_axes or axis_size must be specified")
    distinct = set(sizes) | ({axis_size} if axis_size is not None else set())
    if len(distinct) <= 1:
        return distinct.pop()
    names = pe.arg_names_of(fun, args, kwargs)
    lines = [f"  * the `axis_size` argument was {axis_size};"] if axis_size is not None else []
    described = [(core.get_aval(x).shape[a], f"axis {a} of argument {n} of type {_type_str(core.get_aval(x))}")
                 for x, a, n in zip(leaves, axes, names) if a is not None]
    counts = collections.Counter(s for s, _ in described)
    for size, _ in counts.most_common():
        where = [d for s, d in described if s == size]
        if len(where) == 1:
            lines.append(f"  * one axis had size {size}: {where[0]};")
        else:
            lines.append(f"  * most axes ({len(where)} of them) had size {size}, e.g. {where[0]};")
    raise ValueError(f"{api} got inconsistent sizes for array axes to be mapped:\n" + "\n".join(lines)[:-1])


def _map_out(trace, out, axis, size, trailing=0):
    """An output moved to its out_axis (materialised when unmapped, as JAX does; with out_axis None
    it is returned as it is, a Python scalar included). `trailing`: dims of the output's data that
    its leaf does not count (a key's (2,)): a negative axis counts on the leaf's shape."""
    val, dim = trace.lift(out)
    if axis is None:
        if dim is not batching.not_mapped:
            raise ValueError(f"at vmap out_axes, got axis spec None but output was batched on axis {dim}")
        return val
    if dim is batching.not_mapped:
        val = asarray(val)
    ndim = core.get_aval(val).ndim + (dim is batching.not_mapped) - trailing
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return batching.matchaxis(val, dim, axis % ndim, size)


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorises `fun` over the axes `in_axes` of its positional arguments (kwargs: axis 0)."""
    if not callable(fun):
        raise TypeError(f"vmap requires a callable, got {fun!r}")
    if isinstance(in_axes, list):  # JAX reads a top-level list as a tuple
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                        f"arguments passed to the function, but got {in_axes}.")
    _check_axis_spec("in_axes", in_axes)
    _check_axis_spec("out_axes", out_axes)

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                             f"positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        leaves = tree_util.tree_leaves((args, kwargs))  # the axes and sizes are the leaves' (a key's own shape)
        arg_axes = flatten_axes("in_axes", args, in_axes)
        axes = arg_axes + [0] * (len(leaves) - len(arg_axes))
        axes = [_canonical_in_axis(a, x) for a, x in zip(axes, leaves)]
        size = _axis_size(fun, args, kwargs, leaves, axes, axis_size)
        trace = batching.BatchTrace(core.current_trace(), batching.AxisData(axis_name, size, spmd_axis_name))
        with core.extend_axis_env(axis_name, size), core.new_trace(trace):
            data, in_tree = data_leaves.flatten((args, kwargs))  # one per leaf: keys as their data
            ins = [x if a is None else batching.BatchTracer(trace, asarray(x), a) for x, a in zip(data, axes)]
            a, k = in_tree.unflatten(ins)
            out = fun(*a, **k)
            out_data, out_tree = data_leaves.flatten(out)
            trailing = [core.get_aval(d).ndim - core.get_aval(x).ndim if d is not x else 0
                        for d, x in zip(out_data, tree_util.tree_leaves(out))]
            outs = [_map_out(trace, o, ax, size, t)
                    for o, ax, t in zip(out_data, flatten_axes("out_axes", out, out_axes), trailing)]
        return out_tree.unflatten(outs)

    return vmap_f
