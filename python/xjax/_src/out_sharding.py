"""The `out_sharding` argument that JAX's array-making functions take (lax.reshape, random.normal,
...): xjax arrays live on one device, so a sharding that leaves the result whole is honoured as is
and one that splits it is refused by `sharding.check_trivial`. One wrapper gives each such function
the argument."""
import functools

from xjax._src.sharding import check_trivial


def accepts_out_sharding(fun, api_name):
    """`fun` with JAX's keyword-only out_sharding argument; api_name (jax.lax.reshape) names it in errors."""
    @functools.wraps(fun)
    def with_out_sharding(*args, out_sharding=None, **kwargs):
        if out_sharding is not None:
            check_trivial(out_sharding, api_name)
        return fun(*args, **kwargs)

    return with_out_sharding


def add_out_sharding(namespace, module_name, names):
    """Gives the functions `names` of a module's namespace (its globals()) the out_sharding argument."""
    for name in names:
        namespace[name] = accepts_out_sharding(namespace[name], f"{module_name}.{name}")
