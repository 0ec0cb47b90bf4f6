"""jnp functions built on vmap: vectorize (NumPy's generalized ufuncs) and apply_along_axis."""
import functools
import re

import numpy as np

from xjax._src import lax, tree_util
from xjax._src.numpy import creation, util
from xjax._src.vmap import vmap

_DIM = r"\w+"
_ARG = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_SIGNATURE = re.compile(rf"^{_ARG}(?:,{_ARG})*->{_ARG}(?:,{_ARG})*$")


def _parse_signature(signature):
    """([core dims of each input], [core dims of each output]) of a gufunc signature '(m,n),(n)->(m)'."""
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.split("->")
    return [[tuple(re.findall(_DIM, a)) for a in re.findall(_ARG, side)] for side in (ins, outs)]


def _record_core_sizes(sizes, shape, core_dims, context, is_input):
    """Checks the trailing dims of `shape` against the named core dims, recording new names."""
    if is_input and len(shape) < len(core_dims):
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all core dimensions "
                         f"{core_dims!r} {context}")
    if not is_input and len(shape) != len(core_dims):
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core_dims!r} {context}")
    for name, size in zip(core_dims, shape[len(shape) - len(core_dims):]):
        if sizes.setdefault(name, size) != size:
            raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs {sizes[name]!r} {context}")


def _check_outputs(out, sizes, out_dims, context):
    if len(out_dims) > 1 and not isinstance(out, tuple):
        raise TypeError(f"output must be a tuple when multiple outputs are expected, got: {out!r}\n{context}")
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != len(out_dims):
        raise TypeError(f"wrong number of output arguments: expected {len(out_dims)}, got {len(outs)} {context}")
    sizes = dict(sizes)
    for o, dims in zip(outs, out_dims):
        _record_core_sizes(sizes, np.shape(o), dims, context, is_input=False)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """pyfunc, written for scalars (or for the core dims of `signature`), mapped over the broadcast
    leading dims of its arguments by nested vmaps (no Python loop, no broadcast copies).

    excluded: positions or keyword names passed to pyfunc unchanged; None arguments are too.
    Keyword arguments are passed unchanged.
    """
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(f"jax.numpy.vectorize can only exclude integer or string arguments, but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        dynamic = [i for i in range(len(args)) if i not in excluded]
        if signature is None:
            in_dims, out_dims = [()] * len(dynamic), None
        else:
            in_dims, out_dims = _parse_signature(signature)
            if len(in_dims) != len(dynamic):
                raise TypeError(f"wrong number of positional arguments: expected {len(in_dims)}, got {len(dynamic)} "
                                f"{context}")
        nones = {k for k, i in enumerate(dynamic) if args[i] is None}
        if any(in_dims[k] for k in nones):
            raise ValueError(f"Cannot pass None at locations {nones} with signature={signature!r}")
        mapped = [i for k, i in enumerate(dynamic) if k not in nones]
        core_dims = [d for k, d in enumerate(in_dims) if k not in nones]
        arrays = [creation.asarray(args[i]) for i in mapped]

        sizes = {}
        for a, dims in zip(arrays, core_dims):
            _record_core_sizes(sizes, a.shape, dims, context, is_input=True)
        loop_shapes = [a.shape[:a.ndim - len(dims)] for a, dims in zip(arrays, core_dims)]
        loop_shape = util.broadcast_shapes(*loop_shapes)

        def call(*xs):
            full = list(args)
            for i, x in zip(mapped, xs):
                full[i] = x
            out = pyfunc(*full, **kwargs)
            if out_dims is not None:
                _check_outputs(out, sizes, out_dims, context)
            return out

        # One vmap per loop dim, outermost first; an argument takes part where its size is not 1
        # (its size-1 and missing loop dims are squeezed away, so vmap broadcasts it instead).
        n = len(loop_shape)
        padded = [(1,) * (n - len(s)) + s for s in loop_shapes]
        arrays = [lax.squeeze(a, [i for i, d in enumerate(s) if d == 1]) for a, s in zip(arrays, loop_shapes)]
        fun, size_one = call, []
        for dim in reversed(range(n)):
            in_axes = tuple(None if s[dim] == 1 else 0 for s in padded)
            if all(a is None for a in in_axes):
                size_one.append(dim)
            else:
                fun = vmap(fun, in_axes=in_axes)
        out = fun(*arrays)
        if not size_one:
            return out
        return tree_util.tree_map(lambda o: lax.expand_dims(o, sorted(size_one)), out)

    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to the 1-D slices of arr along axis: one vmap per other dim; func1d's result
    dims take the place of `axis`."""
    x = creation.asarray(arr)
    ax = util.canonicalize_axis(axis, x.ndim)
    fun = lambda v: func1d(v, *args, **kwargs)  # noqa: E731
    for i in range(1, x.ndim - ax):  # the dims after axis, last one outermost, each put back last
        fun = vmap(fun, in_axes=i, out_axes=-1)
    for _ in range(ax):  # the dims before axis stay in front
        fun = vmap(fun)
    return fun(x)
