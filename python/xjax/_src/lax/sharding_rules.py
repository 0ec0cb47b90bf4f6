"""The sharding rules of lax's primitives: the sharding in the type of each result, as JAX's rules give
it, when an operand's type carries one (a value traced from an array split over Explicit mesh axes).

A rule takes the operands' avals and the params and returns a NamedSharding over the operands'
abstract mesh (a list when the primitive has several results); the jaxpr trace asks it
(`DynamicJaxprTrace._typed_sharding`). Where JAX's rule cannot decide it raises JAX's
ShardingTypeError with JAX's message. A primitive without a rule keeps the types its abstract eval
gives where they carry shardings (jit, loops: their bodies' types), else its results are unsplit.
"""
import math

from xjax._src.errors import ShardingTypeError
from xjax._src.lax import complex_parts, composed_ops, elementwise as ew, reduction, special
from xjax._src.lax.contraction import dot_general_p
from xjax._src.lax.layout import (broadcast_in_dim_p, concatenate_p, pad_p, reshape_p, rev_p, slice_p, squeeze_p,
                                  transpose_p)
from xjax._src.lax.sorting import sort_p
from xjax._src.lax.stop_gradient import stop_gradient_p
from xjax._src.sharding import EMPTY_ABSTRACT_MESH, NamedSharding, PartitionSpec


def spec_of(aval):
    """Per dimension, the mesh axes splitting it (None, a name, or a tuple of names), as JAX's partitions."""
    s = getattr(aval, "_sharding", None)
    spec = tuple(s.spec) if s is not None else ()
    return spec + (None,) * (len(aval.shape) - len(spec))


def mesh_of(*avals):
    """The abstract mesh of the first operand whose type carries a sharding."""
    for a in avals:
        s = getattr(a, "_sharding", None)
        if s is not None:
            return s.mesh
    return None


def typed(mesh, spec):
    return NamedSharding(mesh, PartitionSpec(*spec))


def _names(p):
    return () if p is None else (p,) if isinstance(p, str) else tuple(p)


def _entry(names):
    return None if not names else names[0] if len(names) == 1 else tuple(names)


def _legal(name, avals, mesh, spec, shape):
    """typed(mesh, spec), or JAX's ShardingTypeError where a mesh axis would split two dimensions."""
    names = [n for p in spec for n in _names(p)]
    if len(names) != len(set(names)):
        shown = ",".join(str(d) if p is None else f"{d}@{p}" if isinstance(p, str) else f"{d}@({','.join(p)})"
                         for d, p in zip(shape, spec))
        raise ShardingTypeError(f"{name} operation with inputs: {', '.join(a.str_short() for a in avals)} produces an "
                                f"illegally sharded result: {avals[0].str_short().split('[')[0]}[{shown}]")
    return typed(mesh, spec)


def _long(aval):
    return f"{aval.dtype.name}[{aval._dims_text()}]"


# ---- elementwise -------------------------------------------------------------------------------

def broadcasting(name):
    """JAX's broadcasting_sharding_rule: per dimension the operands' common split; an operand of size 1
    or unsplit there defers to the others; two different splits are a ShardingTypeError."""

    def rule(*avals, **params):
        mesh = mesh_of(*avals)
        shaped = [a for a in avals if a.shape]
        if not shaped:
            return typed(mesh, ())
        return _broadcast(name, avals, mesh, [a.shape for a in shaped], [spec_of(a) for a in shaped])

    return rule


def broadcast_shardings(*avals):
    """The sharding of the result of broadcasting avals together (NumPy's rank promotion: leading unit
    dimensions, unsplit), as jnp's broadcasts give it (JAX's lax.broadcast_shardings); None where no
    aval's type carries one."""
    mesh = mesh_of(*avals)
    if mesh is None:
        return None
    rank = max(a.ndim for a in avals)
    shaped = [a for a in avals if a.shape]
    if not shaped:
        return typed(mesh, ())
    shapes = [(1,) * (rank - a.ndim) + tuple(a.shape) for a in shaped]
    specs = [(None,) * (rank - a.ndim) + spec_of(a) for a in shaped]
    return _broadcast("broadcast_shardings", avals, mesh, shapes, specs)


def _broadcast(name, avals, mesh, shapes, specs):
    """Per dimension the shapes' common split (JAX's broadcasting_sharding_rule)."""
    out = []
    for i, ss in enumerate(zip(*specs)):
        if all(s == ss[0] for s in ss):
            out.append(ss[0])
            continue
        nontrivial = [s for s, shape in zip(ss, shapes) if not (shape[i] == 1 and s is None)]
        if not nontrivial or all(s == nontrivial[0] for s in nontrivial):
            out.append(nontrivial[0] if nontrivial else None)
            continue
        got = None
        for s in ss:
            if got is None:
                got = s
            elif s is not None and s != got:
                raise ShardingTypeError(f"{name} got incompatible shardings for broadcasting: "
                                        f"{', '.join(str(tuple(sp)) for sp in specs)}.")
        out.append(got)
    return _legal(name, avals, mesh, out, [max(ds) for ds in zip(*shapes)])


def _select_n(which, *cases):
    """JAX's select rule: the cases' common sharding; `which` a scalar, unsplit or split as they are."""
    typed_cases = [c._sharding for c in cases if getattr(c, "_sharding", None) is not None]
    if not typed_cases:
        return None
    first = typed_cases[0]
    if any(s != first for s in typed_cases[1:]):
        shown = ", ".join(str(getattr(c, "_sharding", None) or NamedSharding(EMPTY_ABSTRACT_MESH, PartitionSpec()))
                          for c in cases)
        raise ShardingTypeError(f"select cases must have the same shardings, got [{shown}].")
    which_s = getattr(which, "_sharding", None)
    if which.shape and which_s is not None and (which_s.mesh != first.mesh or spec_of(which) != spec_of(cases[0])):
        raise ShardingTypeError(f"select `which` must be scalar or have the same sharding as cases, got `which` "
                                f"sharding {which_s} but case sharding {cases[0]._sharding}.")
    return first


def _same_as_operand(x, *_, **params):
    return typed(mesh_of(x), spec_of(x))


# ---- layout ------------------------------------------------------------------------------------

def _broadcast_in_dim(x, *, shape, broadcast_dimensions, sharding=None, **_):
    if sharding is not None:
        return sharding
    spec = iter(spec_of(x))
    dims = set(int(d) for d in broadcast_dimensions)
    return typed(mesh_of(x), [next(spec) if i in dims else None for i in range(len(shape))])


def _transpose(x, *, permutation):
    spec = spec_of(x)
    return typed(mesh_of(x), [spec[int(p)] for p in permutation])


def _squeeze(x, *, dimensions):
    drop = {int(d) % x.ndim for d in dimensions}
    return typed(mesh_of(x), [p for i, p in enumerate(spec_of(x)) if i not in drop])


def _reshape_error(x, new_sizes):
    raise ShardingTypeError("This reshape is not supported. Please specify the sharding of the output via the "
                            f"`out_sharding` argument of jax.lax.reshape. Got operand type: {_long(x)}, new sizes: "
                            f"{tuple(new_sizes)}")


def _groups(old, new):
    """Consecutive dimension groups (old dims, new dims) of equal products, or None."""
    out, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        gi, gj = [i], [j]
        if i >= len(old) or j >= len(new):
            return None
        a, b = old[i], new[j]
        i, j = i + 1, j + 1
        while a != b:
            if a < b and i < len(old):
                a *= old[i]
                gi.append(i)
                i += 1
            elif b < a and j < len(new):
                b *= new[j]
                gj.append(j)
                j += 1
            else:
                return None
        out.append((gi, gj))
    return out


def _reshape(x, *, new_sizes, dimensions=None, sharding=None):
    """JAX's reshape rule: unit dimensions move freely; a dimension split into several keeps its axes on
    the leading ones (each dividing them); merged dimensions keep their axes, major first, where no
    unsplit one comes before a split one; others refuse."""
    if sharding is not None:
        return sharding
    spec, mesh, new_sizes = spec_of(x), mesh_of(x), tuple(int(n) for n in new_sizes)
    if all(p is None for p in spec):
        return typed(mesh, [None] * len(new_sizes))
    if [d for d in x.shape if d != 1] == [d for d in new_sizes if d != 1]:
        kept = iter(p for d, p in zip(x.shape, spec) if d != 1)
        return typed(mesh, [None if n == 1 else next(kept) for n in new_sizes])
    groups = _groups(x.shape, new_sizes)
    if groups is None or dimensions is not None or sum(len(gi) > 1 and len(gj) > 1 for gi, gj in groups):
        _reshape_error(x, new_sizes)
    out = []
    for gi, gj in groups:
        names = [n for i in gi for n in _names(spec[i])]
        if not names:
            out.extend([None] * len(gj))
            continue
        merged = [spec[i] for i in gi]
        while merged[-1] is None:
            merged.pop()
        if None in merged:  # (an unsplit dimension before a split one: the split would not be one block)
            _reshape_error(x, new_sizes)
        axes = iter(names)
        for j in gj:
            size, got = new_sizes[j], []
            while size > 1:
                n = next(axes, None)
                if n is None:
                    break
                size, rem = divmod(size, mesh.shape[n])
                if rem:
                    _reshape_error(x, new_sizes)
                got.append(n)
            out.append(_entry(got))
        if next(axes, None) is not None:
            _reshape_error(x, new_sizes)
    return typed(mesh, out)


def _keeping(x, *_, **params):
    """slice, pad, rev, concatenate (JAX's rules keep the first operand's layout)."""
    return typed(mesh_of(x), spec_of(x))


def _slice(x, *, start_indices, limit_indices, strides=None):
    """The operand's layout; a split dimension's slice must divide over its axes (JAX's)."""
    spec, mesh = spec_of(x), mesh_of(x)
    shape = tuple(-(-(hi - lo) // (strides[d] if strides else 1))
                  for d, (lo, hi) in enumerate(zip(start_indices, limit_indices)))
    for size, p in zip(shape, spec):
        parts = math.prod(mesh.shape[n] for n in _names(p))
        if size % parts:
            raise ShardingTypeError(f"slicing on sharded dims where out dim ({size}) is not divisible by mesh axes "
                                    f"({parts}) with spec ({','.join(_names(p))}) is not implemented. Got input "
                                    f"type={x.str_short()} and output shape={shape}")
    return typed(mesh, spec)


def _unsplit_along(param, message, multiple_results=False):
    """cumulative ops and sort: the operands' layouts, the dimension `param` names unsplit (JAX's error)."""
    def rule(*avals, **params):
        dim = params[param]
        for a in avals:
            if spec_of(a)[dim] is not None:
                raise ShardingTypeError(message.format(type=_long(a), sharding=a._sharding, dim=dim))
        out = [typed(mesh_of(*avals), spec_of(a)) for a in avals]
        return out if multiple_results else out[0]

    return rule


# ---- reductions and contractions ---------------------------------------------------------------

def _reduce(x, *, axes, out_sharding=None, **_):
    if out_sharding is not None:
        return out_sharding
    axes = {int(a) for a in axes}
    return typed(mesh_of(x), [p for i, p in enumerate(spec_of(x)) if i not in axes])


def _dot_general(lhs, rhs, *, dimension_numbers, out_sharding=None, **_):
    if out_sharding is not None:
        return out_sharding
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = spec_of(lhs), spec_of(rhs)
    lbs, rbs = tuple(ls[i] for i in lb), tuple(rs[i] for i in rb)
    lcs, rcs = tuple(ls[i] for i in lc), tuple(rs[i] for i in rc)
    for got, want, what in ((lbs, rbs, "lhs batch dimensions and rhs batch dimensions to have the consistent"),
                            (lcs, rcs, "contracting dimensions to have consistent")):
        if any(a is not None and b is not None and a != b for a, b in zip(got, want)):
            raise ShardingTypeError(f"dot_general requires {what} sharding, got {got} and {want}.")
    if any(a is not None and b is not None for a, b in zip(lcs, rcs)):
        raise ShardingTypeError("Contracting dimensions are sharded and it is ambiguous how the output should be "
                                "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
                                f"lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}")
    lfree = [i for i in range(lhs.ndim) if i not in lc and i not in lb]
    rfree = [i for i in range(rhs.ndim) if i not in rc and i not in rb]
    shape = [lhs.shape[i] for i in lb] + [lhs.shape[i] for i in lfree] + [rhs.shape[i] for i in rfree]
    return _legal("dot_general", (lhs, rhs), mesh_of(lhs, rhs), list(lbs) + [ls[i] for i in lfree] + [rs[i] for i in rfree],
                  shape)


def _register():
    elementwise = {ew.fma_p, ew.clamp_p, ew.add_any_p, special.igamma_p, special.igammac_p,
                   special.igamma_grad_a_p, special.polygamma_p, special.zeta_p, special.regularized_incomplete_beta_p,
                   special.bessel_i0e_p, special.bessel_i1e_p, complex_parts.real_p, complex_parts.imag_p,
                   complex_parts.conj_p, complex_parts.complex_p, composed_ops.mulhi_p, composed_ops.reduce_precision_p,
                   stop_gradient_p}
    for p in set(ew.PRIMITIVES.values()) | elementwise:
        p.def_rules(sharding=broadcasting(p.name))
    ew.convert_element_type_p.def_rules(sharding=_same_as_operand)
    ew.select_n_p.def_rules(sharding=_select_n)
    for p in (reduction.reduce_sum_p, reduction.reduce_max_p, reduction.reduce_min_p, reduction.reduce_prod_p,
              reduction.reduce_and_p, reduction.reduce_or_p, reduction.reduce_xor_p, reduction.argmax_p,
              reduction.argmin_p):
        p.def_rules(sharding=_reduce)
    cumulative = _unsplit_along("axis", "Input should be unsharded over the axis being reduced. Got input type={type} "
                                        "and axis={dim}")
    for p in (reduction.cumsum_p, reduction.cumprod_p, reduction.cummax_p, reduction.cummin_p,
              reduction.cumlogsumexp_p):
        p.def_rules(sharding=cumulative)
    sort_p.def_rules(sharding=_unsplit_along("dimension", "Arguments to sort must be unsharded over the sorting "
                                                          "dimension. Got arg sharding={sharding} and sorting "
                                                          "dimension={dim}", multiple_results=True))
    broadcast_in_dim_p.def_rules(sharding=_broadcast_in_dim)
    transpose_p.def_rules(sharding=_transpose)
    squeeze_p.def_rules(sharding=_squeeze)
    reshape_p.def_rules(sharding=_reshape)
    dot_general_p.def_rules(sharding=_dot_general)
    slice_p.def_rules(sharding=_slice)
    for p in (concatenate_p, pad_p, rev_p):
        p.def_rules(sharding=_keeping)


_register()
