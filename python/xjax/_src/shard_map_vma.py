"""shard_map's check_vma: which mesh axes each value of a body may vary over, so that an out_spec
that leaves out an axis its result varies over is refused as JAX refuses it.

A block varies over the axes its in_spec splits it by; an equation's results vary over the union of
its operands' axes, but for the collectives: a reduction or all_gather over axes makes its result
the same on all of them, axis_index varies over its axes, and the others (ppermute, psum_scatter,
all_to_all) vary over theirs. Nested jit bodies are followed; another equation whose jaxprs hold
collectives makes the inference give up (no check), rather than refuse a correct program.
"""
from xjax._src.jaxpr import Literal, jaxprs_in_params
from xjax._src.jit_primitive import jit_p
from xjax._src.lax import parallel as P

_REDUCING = (P.psum_p, P.pmax_p, P.pmin_p, P.all_gather_p)


def _holds_collective(jaxpr):
    return any(e.primitive in P.COLLECTIVES or any(_holds_collective(j) for j in jaxprs_in_params(e.params))
               for e in jaxpr.eqns)


def varying_axes(jaxpr, in_axes):
    """Per output of `jaxpr`, the set of mesh axes it may vary over (in_axes: per input); None when
    the inference gives up."""
    env = dict(zip(jaxpr.invars, in_axes))
    for eqn in jaxpr.eqns:
        ins = frozenset().union(*[env.get(a, frozenset()) for a in eqn.invars if type(a) is not Literal])
        prim = eqn.primitive
        if prim in P.COLLECTIVES:
            names = frozenset(eqn.params["axis_name"])
            out = [frozenset(names) if prim is P.axis_index_p else ins - names if prim in _REDUCING else ins | names]
            out = out * len(eqn.outvars)
        elif prim is jit_p:
            inner = eqn.params["jaxpr"].jaxpr
            out = varying_axes(inner, [env.get(a, frozenset()) if type(a) is not Literal else frozenset()
                                       for a in eqn.invars])
            if out is None:
                return None
        elif any(_holds_collective(j) for j in jaxprs_in_params(eqn.params)):
            return None
        else:
            out = [ins] * len(eqn.outvars)
        env.update(zip(eqn.outvars, out))
    return [env.get(a, frozenset()) if type(a) is not Literal else frozenset() for a in jaxpr.outvars]


def _show(axes):
    return "{" + ", ".join(sorted(axes)) + "}"


def check_out_specs(fun_name, mesh, jaxpr, in_axes, out_axes):
    """Raises JAX's error when an output varies over a mesh axis its out_spec leaves out."""
    varying = varying_axes(jaxpr, in_axes)
    if varying is None:
        return
    for i, (vary, (spec, kept)) in enumerate(zip(varying, out_axes)):
        missing = vary - kept
        if missing:
            where = "out_specs" if len(out_axes) == 1 else f"out_specs[{i}]"
            raise ValueError(
                f"shard_map applied to the function '{fun_name}' was given out_specs which require replication which "
                f"can't be statically inferred given the mesh:\n\nThe mesh given has shape {mesh.axis_sizes} with "
                f"corresponding axis names {mesh.axis_names}.\n\n{where} is {spec} which implies that the "
                f"corresponding output value is only varying across mesh axes {_show(kept)} and not "
                f"{_show(missing)}, but it was inferred to be possibly varying over {_show(missing)}\n\nCheck if these "
                "output values are meant to be replicated over those mesh axes. If not, consider revising the "
                "corresponding out_specs entries. If so, consider disabling the check by passing the check_vma=False "
                "argument to `jax.shard_map`.")
