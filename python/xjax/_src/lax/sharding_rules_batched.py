"""The sharding rules of primitives that work on whole trailing blocks and map over the others: linear
algebra (over its batch dimensions; linalg.py and linalg_forms.py give their primitives these rules) and
convolution (over its batch dimension), as JAX 0.10.2's. A block's own dimensions must be unsplit; the
batch dimensions keep their splits. See lax/sharding_rules.py."""
from xjax._src.errors import ShardingTypeError
from xjax._src.lax.convolution import conv_general_dilated_p
from xjax._src.lax.sharding_rules import mesh_of, spec_of, typed
from xjax._src.lax.sharding_rules_indexing import keeping_divisible
from xjax._src.sharding import PartitionSpec


BATCH_RANKS = {}  # primitive -> per operand, how many trailing dimensions one problem has (jit's partitioner)


def batched(prim, ranks):
    """JAX's linalg_sharding_rule: operand i's last ranks[i] dimensions unsplit, the leading (batch) ones
    split alike in every operand; each result split as they are along its leading dimensions."""
    BATCH_RANKS[prim] = ranks

    def rule(*avals, **params):
        batch_specs = []
        for i, (rank, a) in enumerate(zip(ranks, avals)):
            spec = spec_of(a)
            if any(p is not None for p in spec[len(spec) - rank:]):
                raise ShardingTypeError(f"Input {i} to {prim.name} must be unsharded on non-batch dimensions, but got "
                                        f"{PartitionSpec(*spec)}.")
            batch_specs.append(spec[:len(spec) - rank])
        if any(b != batch_specs[0] for b in batch_specs[1:]):
            raise ShardingTypeError(f"All inputs to {prim.name} must have the same batch sharding, but got "
                                    f"{batch_specs}.")
        outs = prim.abstract_eval(*avals, **params)
        mesh, batch = mesh_of(avals[0]), list(batch_specs[0])
        shardings = [typed(mesh, batch + [None] * (o.ndim - len(batch))) for o in
                     (outs if prim.multiple_results else [outs])]
        return shardings if prim.multiple_results else shardings[0]

    return rule


def triangular_solve_rule(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """JAX's: a and b batched alike, the dimensions each contracts over unsplit."""
    (abatch, amat), (bbatch, bmat) = [(spec_of(x)[:-2], spec_of(x)[-2:]) for x in (a, b)]
    if abatch != bbatch:
        raise ShardingTypeError(f"All inputs to triangular_solve must have the same batch sharding, but got {abatch} "
                                f"and {bbatch}.")
    flags = f"left_side={left_side} and transpose_a={transpose_a}"
    if amat[left_side ^ transpose_a] is not None:
        raise ShardingTypeError("triangular solve input `a` must be unsharded on the contracting axis, but got "
                                f"{PartitionSpec(*spec_of(a))} with {flags}.")
    if bmat[not left_side] is not None:
        raise ShardingTypeError("triangular solve input `b` must be unsharded on the contracting axis, but got "
                                f"{PartitionSpec(*spec_of(b))} with {flags}.")
    out = [amat[transpose_a], bmat[1]] if left_side else [bmat[0], amat[not transpose_a]]
    return typed(mesh_of(a), list(abatch) + out)


def _conv(lhs, rhs, *, dimension_numbers, out_sharding=None, **params):
    """JAX's: the lhs's layout (its spatial dimensions' splits dividing the result's) where the kernel is
    unsplit and the lhs's feature dimension too; otherwise out_sharding must say."""
    if out_sharding is not None:
        return out_sharding
    if all(p is None for p in spec_of(rhs)) and spec_of(lhs)[dimension_numbers.lhs_spec[1]] is None:
        out = conv_general_dilated_p.abstract_eval(lhs, rhs, dimension_numbers=dimension_numbers, **params)
        return keeping_divisible(lhs, out.shape, "conv_general_dilated")
    raise ShardingTypeError("Please specify the output sharding via `out_sharding` parameter of `conv_general_dilated`")


def _register():
    conv_general_dilated_p.def_rules(sharding=_conv)


_register()
