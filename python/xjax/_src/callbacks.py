"""pure_callback and io_callback: Python functions called on host values from traced programs.

Each is a primitive whose results the caller declares (`result_shape_dtypes`). No graph holds it:
a jitted program that contains one runs as compiled segments with the callback called between
them (graph_lowering's plans), in program order. pure_callback is pure (unused results are
dropped, vmap follows `vmap_method`, differentiation is refused as JAX refuses it); io_callback
has an effect, so it always runs.
"""
import numpy as np

from xjax._src import core, data_leaves, dtypes, errors, tree_util
from xjax._src.interpreters import batching
from xjax._src.lax import layout
from xjax._src.lax.base import asarray
from xjax._src.sharding import check_trivial

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized", None)


def _result_avals(result_shape_dtypes, api):
    def aval(x):
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(f"{api}: result_shape_dtypes must be a pytree of objects with shape and dtype "
                            f"(jax.ShapeDtypeStruct), got {x!r}")
        return core.ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))

    return tree_util.tree_flatten(tree_util.tree_map(aval, result_shape_dtypes))


def _call(api, callback, in_tree, result_avals, args):
    """Runs the user's callback on xjax Arrays; its results, checked and cast to the declared types."""
    a, kw = in_tree.unflatten([asarray(x) for x in args])
    try:
        results = callback(*a, **kw)
    except Exception as e:  # as JAX, which runs these callbacks from its compiled programs, eager or not
        raise errors.callback_error(e) from None
    leaves, _ = tree_util.tree_flatten(results)
    if len(leaves) != len(result_avals):
        raise ValueError(f"{api}: the callback returned {len(leaves)} values, but result_shape_dtypes declares "
                         f"{len(result_avals)}")
    outs = []
    for x, aval in zip(leaves, result_avals):
        value = np.asarray(x)
        if value.shape != aval.shape:
            raise ValueError(f"{api}: the callback returned a value of shape {value.shape}, but "
                             f"result_shape_dtypes declares {aval.str_short()}")
        outs.append(asarray(value.astype(aval.dtype, copy=False)))
    return outs


def _impl(*args, callback, in_tree, result_avals, api, **_):
    return _call(api, callback, in_tree, result_avals, args)


def _abstract_eval(*avals, result_avals, **_):
    return list(result_avals)


def _no_jvp(kind):
    def jvp(primals, tangents, **params):
        raise ValueError(f"{kind} callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
                         f"while taking gradients.")

    return jvp


def _sequential(prim, axis, vals, dims, params):
    """One call per example, in order, stacked (what lax.map over the batch gives)."""
    rows = [prim.bind(*[v if d is None else layout.index_in_dim(v, i, d, keepdims=False)
                        for v, d in zip(vals, dims)], **params) for i in range(axis.size)]
    outs = [layout.stack([r[k] for r in rows], 0) for k in range(len(params["result_avals"]))]
    return outs, [0] * len(outs)


def _pure_batch(axis, vals, dims, *, vmap_method, result_avals, **params):
    full = dict(params, vmap_method=vmap_method, result_avals=result_avals)
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(pure_callback_p, axis, vals, dims, full)
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(f"vmap is only supported for the pure_callback primitive when vmap_method is one "
                                  f"of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
                                  f"'legacy_vectorized'. Got vmap_method={vmap_method}.")
    # The callback is called once on the whole batch (at the front); unbatched operands get an axis
    # of size 1 (expand_dims) or of the batch size (broadcast_all); legacy_vectorized leaves them.
    moved = []
    for v, d in zip(vals, dims):
        if d is not None:
            moved.append(batching.moveaxis(v, d, 0))
        elif vmap_method == "legacy_vectorized":
            moved.append(v)
        else:
            size = axis.size if vmap_method == "broadcast_all" else 1
            shape = core.get_aval(v).shape
            moved.append(layout.broadcast_in_dim(v, (size, *shape), tuple(range(1, len(shape) + 1))))
    batched = tuple(a.update(shape=(axis.size, *a.shape)) for a in result_avals)
    outs = pure_callback_p.bind(*moved, vmap_method=vmap_method, result_avals=batched, **params)
    return outs, [0] * len(outs)


def _io_batch(axis, vals, dims, *, ordered, **params):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, axis, vals, dims, dict(params, ordered=ordered))


pure_callback_p = core.Primitive("pure_callback", multiple_results=True)
pure_callback_p.def_rules(impl=_impl, abstract_eval=_abstract_eval, can_lower=lambda params: False,
                          jvp=_no_jvp("Pure"), batch=_pure_batch)

io_callback_p = core.Primitive("io_callback", multiple_results=True)
io_callback_p.def_rules(impl=_impl, abstract_eval=_abstract_eval, can_lower=lambda params: False,
                        jvp=_no_jvp("IO"), batch=_io_batch, has_effect=True)


def _check_sharding(sharding, api):
    if sharding is not None:
        check_trivial(sharding, api)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Calls the pure Python function `callback(*args, **kwargs)` on host values, from eager or traced
    code; it must return values of the shapes and dtypes of `result_shape_dtypes` (a pytree of
    ShapeDtypeStructs). Under vmap, `vmap_method` says how ('sequential', 'expand_dims', ...)."""
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(_VMAP_METHODS)}, but got: "
                         f"{vmap_method}")
    return _bind_callback(pure_callback_p, "pure_callback", callback, result_shape_dtypes, sharding, args, kwargs,
                          vmap_method=vmap_method)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Calls `callback(*args, **kwargs)`, a Python function with side effects, on host values; it always
    runs (its results may go unused) and returns values of the shapes and dtypes of
    `result_shape_dtypes`. Calls run in program order."""
    return _bind_callback(io_callback_p, "io_callback", callback, result_shape_dtypes, sharding, args, kwargs,
                          ordered=ordered)


def _bind_callback(prim, api, callback, result_shape_dtypes, sharding, args, kwargs, **params):
    """Binds a callback primitive on the flattened (args, kwargs); its results in result_shape_dtypes' structure."""
    _check_sharding(sharding, api)
    flat_args, in_tree = data_leaves.flatten((args, kwargs))  # (keys as their data)
    result_avals, out_tree = _result_avals(result_shape_dtypes, api)
    outs = prim.bind(*flat_args, callback=callback, in_tree=in_tree, result_avals=tuple(result_avals), api=api,
                     **params)
    return tree_util.tree_unflatten(out_tree, outs)

