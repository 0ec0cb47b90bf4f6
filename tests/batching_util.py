"""check_batch: a vmapped function against a Python loop of the unbatched function over the batch."""
import numpy as np

import xjax


def _take(x, axis, i):
    return x if axis is None else np.take(np.asarray(x), i, axis=axis)


def loop_reference(fun, args, in_axes, out_axes=0):
    """fun applied example by example (NumPy slicing), its outputs stacked along out_axes."""
    axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
    size = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [fun(*[_take(a, ax, i) for a, ax in zip(args, axes)]) for i in range(size)]
    leaves0, tree = xjax.tree_util.tree_flatten(outs[0])
    per_leaf = zip(*[xjax.tree_util.tree_leaves(o) for o in outs])
    o_axes = out_axes if isinstance(out_axes, (tuple, list)) else (out_axes,) * len(leaves0)
    return xjax.tree_util.tree_unflatten(
        tree, [np.stack([np.asarray(v) for v in vs], axis=ax) for vs, ax in zip(per_leaf, o_axes)])


def check_batch(fun, args, in_axes=0, out_axes=0, rtol=1e-6, atol=1e-6, jit=False):
    """Asserts vmap(fun) (optionally jitted) equals the loop reference, in value, shape and dtype."""
    f = xjax.vmap(fun, in_axes=in_axes, out_axes=out_axes)
    got = (xjax.jit(f) if jit else f)(*args)
    want = loop_reference(fun, args, in_axes, out_axes)
    got_l, got_t = xjax.tree_util.tree_flatten(got)
    want_l, want_t = xjax.tree_util.tree_flatten(want)
    assert got_t == want_t, (got_t, want_t)
    for g, w in zip(got_l, want_l):
        g = np.asarray(g)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
