"""The collectives JAX defines on top of the others (pbroadcast, pshuffle, pswapaxes), and the ones xjax
cannot express (psend/precv: point-to-point transfers with tokens)."""
from xjax._src import tree_util
from xjax._src.lax.parallel import all_gather, all_to_all, ppermute

__all__ = ["pbroadcast", "precv", "psend", "pshuffle", "pswapaxes"]


def pbroadcast(x, axis_name, source):
    """Every member of the named axis gets the value of member `source`."""
    if isinstance(axis_name, (list, tuple)):
        raise NotImplementedError("pbroadcast over several axis names is not supported in xjax")
    return tree_util.tree_map(lambda leaf: all_gather(leaf, axis_name)[source], x)


def pshuffle(x, axis_name, perm):
    """Member i gets the value of member perm[i]."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the named axis with positional axis `axis` (an all_to_all splitting and concatenating it)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def psend(x, axis_name, perm):
    """Point-to-point send between members of a named axis: not supported in xjax (use ppermute)."""
    raise NotImplementedError("jax.lax.psend is not supported in xjax: use lax.ppermute")


def precv(token, out_shape, axis_name, perm):
    """Point-to-point receive between members of a named axis: not supported in xjax (use ppermute)."""
    raise NotImplementedError("jax.lax.precv is not supported in xjax: use lax.ppermute")
