"""jit's in_shardings and out_shardings: where a jitted function's arguments and results are placed.

Eagerly, in_shardings places each argument (host data, whole arrays) as it says, and a sharded
argument must already be split so, as JAX requires of committed arrays; the program is partitioned
over their mesh (partition.py) and out_shardings places each result. In a traced program (a jit
inside another, grad, vmap) a sharding that splits a value is refused by name; one that leaves it
whole is accepted.
"""
from xjax._src import core, tree_util, vmap as vmap_api
from xjax._src.sharded_array import ShardedArray, device_put, _mesh_sharding
from xjax._src.sharding import check_trivial


def _place_one(x, sharding, what):
    if sharding is None:
        return x
    if isinstance(x, core.Tracer):
        check_trivial(sharding, f"jit {what} (inside a traced program, whose values' types carry no shardings "
                                "in xjax)")
        return x
    target = _mesh_sharding(sharding)
    if what == "in_shardings" and type(x) is ShardedArray and target is not None and x.sharding != target:
        raise ValueError(f"Sharding passed to jit does not match the sharding on the respective arg. Got jit sharding: "
                         f"{target},\narg sharding: {x.sharding} for arg type: {x.typed_aval}")
    return device_put(x, sharding)


def place(tree, shardings, what):
    """tree's leaves placed by `shardings`, a pytree prefix of it (None: a leaf left as it is)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    per_leaf = vmap_api.flatten_axes(what, tree, shardings, "jit")
    return treedef.unflatten([_place_one(x, s, what) for x, s in zip(leaves, per_leaf)])


class ShardedJit:
    """A jitted function (jit.JitWrapped) with in_shardings/out_shardings (see the module docstring);
    its other attributes (lower, trace, clear_cache, ...) are the jitted function's."""

    def __init__(self, jitted, in_shardings, out_shardings):
        self._jitted, self._in, self._out = jitted, in_shardings, out_shardings

    def __call__(self, *args, **kwargs):
        if self._in is not None:
            n = len(args)
            static = {i % n for i in self._jitted._static_argnums if -n <= i < n}
            dyn = [i for i in range(n) if i not in static]
            placed = place(tuple(args[i] for i in dyn), self._in, "in_shardings")
            args = list(args)
            for i, v in zip(dyn, placed):
                args[i] = v
        out = self._jitted(*args, **kwargs)
        return out if self._out is None else place(out, self._out, "out_shardings")

    def __getattr__(self, name):
        return getattr(self._jitted, name)

    def __repr__(self):
        return repr(self._jitted)
