"""optimization_barrier (the core's op: nothing moves across it, nothing is merged through it), JAX's
tokens (create_token, after_all) and platform_dependent (the branch of the platform that runs)."""
import functools

from xjax._src import core, tree_util
from xjax._src.backends import cpu
from xjax._src.interpreters import ad
from xjax._src.lax.base import asarray

__all__ = ["after_all", "create_token", "optimization_barrier", "optimization_barrier_p",
           "platform_dependent"]


# ---- optimization_barrier ---------------------------------------------------------------------------

def _barrier_jvp(primals, tangents):
    # one barrier for the primals and one for the tangents, so the tangents' stays linear
    tangents = [ad.instantiate(t) for t in tangents]
    return optimization_barrier_p.bind(*primals), optimization_barrier_p.bind(*tangents)


def _barrier_transpose(cts, *args):
    return [ad.instantiate(ct) if ad.is_undefined(a) else None for ct, a in zip(cts, args)]


def _barrier_batch(axis, vals, dims):
    return optimization_barrier_p.bind(*vals), list(dims)


optimization_barrier_p = core.Primitive("optimization_barrier", multiple_results=True)
optimization_barrier_p.def_rules(
    abstract_eval=lambda *avals: list(avals),
    impl=functools.partial(cpu.apply_primitive, optimization_barrier_p),
    lowering=lambda ctx, *values: list(ctx.op("optimization_barrier", *values)),
    jvp=_barrier_jvp, transpose=_barrier_transpose, batch=_barrier_batch)


def optimization_barrier(operand, /):
    """The pytree `operand` unchanged, with every leaf computed before anything that reads the result,
    and no operation merged or fused across the barrier."""
    leaves, tree = tree_util.tree_flatten(operand)
    if not leaves:
        return operand
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*[asarray(x) for x in leaves]))


# ---- tokens -----------------------------------------------------------------------------------------

class Token:
    """JAX's ordering token. xjax orders effects by program order (io_callback's calls run in order), so a
    token carries no value: it exists to be passed along as JAX programs pass theirs."""

    def __repr__(self):
        return "Token()"


def create_token(_=None):
    """A new token (the argument is ignored, as in JAX)."""
    return Token()


def after_all(*operands):
    """A token that follows every given token."""
    if any(not isinstance(x, Token) for x in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return Token()


# ---- platform_dependent ------------------------------------------------------------------------------

def platform_dependent(*args, default=None, **per_platform):
    """The branch for the platform that runs (xjax compiles for the CPU: the `cpu` branch, else
    `default`) applied to args."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"platform_dependent: the branch for {name!r} must be callable, got {branch!r}")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(f"platform_dependent: no branch for the cpu platform (given: "
                                  f"{sorted(per_platform)}) and no default")
    return branch(*args)
