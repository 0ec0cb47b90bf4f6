"""The `out_sharding` argument that JAX's array-making functions take (jnp.zeros, lax.reshape,
random.normal, ...): xjax arrays live on one device, so a sharding that splits nothing (None, an
all-None PartitionSpec, a NamedSharding of one, a single device) is honoured as is; one that splits
the result is not supported. One wrapper gives each such function the argument."""
import functools


def _splits(sharding):
    from xjax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

    if sharding is None or isinstance(sharding, SingleDeviceSharding):
        return False
    spec = sharding.spec if isinstance(sharding, NamedSharding) else sharding
    if isinstance(spec, PartitionSpec):
        return any(p is not None for p in spec)
    raise TypeError(f"out_sharding must be a NamedSharding, a PartitionSpec or None, got {sharding!r}")


def accepts_out_sharding(fun, api_name):
    """`fun` with JAX's keyword-only out_sharding argument; api_name (jax.numpy.zeros) names it in errors."""
    @functools.wraps(fun)
    def with_out_sharding(*args, out_sharding=None, **kwargs):
        if out_sharding is not None and _splits(out_sharding):
            raise NotImplementedError(f"{api_name}: out_sharding={out_sharding!r} splits the result over "
                                      f"devices, which xjax does not support")
        return fun(*args, **kwargs)

    return with_out_sharding


def add_out_sharding(namespace, module_name, names):
    """Gives the functions `names` of a module's namespace (its globals()) the out_sharding argument."""
    for name in names:
        namespace[name] = accepts_out_sharding(namespace[name], f"{module_name}.{name}")
