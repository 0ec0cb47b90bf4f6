"""jax.experimental.shard_map: the older spelling of jax.shard_map (mesh and specs positional,
check_rep for check_vma, auto for the axes left to the compiler)."""
from xjax._src.shard_map import shard_map as _shard_map


def shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    """jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep) over
    every axis of the mesh but those in `auto`."""
    names = frozenset(mesh.axis_names) - frozenset(auto)
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep,
                      axis_names=names if auto else frozenset())
