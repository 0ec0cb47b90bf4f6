"""shard_map's check_vma: an out_spec that leaves out a mesh axis its result may vary over is refused
as JAX refuses it. What a result may vary over is its type's: with check_vma the body is traced
with each value typed by the manual axes it varies over (core.shard_map_body, ShapedArray.vma).
"""
from xjax._src import tree_util
from xjax._src.sharding import PartitionSpec, _axis_names


def _ordered(mesh, axes):
    return ",".join(n for n in mesh.axis_names if n in axes)


def check_out_specs(fun_name, mesh, out_tree, flat_specs, out_vmas):
    """Raises JAX's error when a result varies over a mesh axis its out_spec leaves out (out_vmas:
    each flat result's varying axes)."""
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(
        out_tree.unflatten([0] * out_tree.num_leaves))[0]]
    msgs = []
    for path, spec, vma in zip(paths, flat_specs, out_vmas):
        mentioned = set(_axis_names(spec))
        if set(vma) <= mentioned:
            continue
        where = "out_specs" if isinstance(spec, PartitionSpec) and len(flat_specs) == 1 else f"out_specs{path}"
        unmentioned = [n for n in mesh.axis_names if n not in mentioned]
        if len(unmentioned) > 1:
            msgs.append(f"* {where} is {spec} which implies that the corresponding output value is only varying "
                        f"across mesh axes {{{_ordered(mesh, mentioned)}}} and not "
                        f"{{{_ordered(mesh, [n for n in unmentioned if n in vma])}}}, but it was inferred to be "
                        f"possibly varying over {{{_ordered(mesh, vma)}}}")
        else:
            msgs.append(f"* {where} is {spec} which implies that the corresponding output value is replicated "
                        f"across mesh axis '{unmentioned[0]}', but could not infer replication over any axes")
    if not msgs:
        return
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    raise ValueError(
        f"shard_map applied to the function '{fun_name}' was given out_specs which require replication which "
        f"can't be statically inferred given the mesh:\n\nThe mesh given has shape {mesh.axis_sizes} with "
        f"corresponding axis names {mesh.axis_names}.\n\n" + "\n\n".join(msgs) + "\n\nCheck if these output values "
        "are meant to be replicated over those mesh axes. If not, consider revising the corresponding out_specs "
        "entries. If so, consider disabling the check by passing the check_vma=False argument to `jax.shard_map`.")
