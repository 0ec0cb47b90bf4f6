"""The `out_sharding` argument of JAX's samplers: xjax arrays live on one device, so a sharding
that splits nothing (None, an all-None PartitionSpec, a NamedSharding of one, a single device) is
honoured as is; one that splits the result is not supported."""
import functools


def _splits(sharding):
    from xjax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

    if sharding is None or isinstance(sharding, SingleDeviceSharding):
        return False
    spec = sharding.spec if isinstance(sharding, NamedSharding) else sharding
    if isinstance(spec, PartitionSpec):
        return any(p is not None for p in spec)
    raise TypeError(f"out_sharding must be a NamedSharding, a PartitionSpec or None, got {sharding!r}")


def accepts_out_sharding(sampler):
    """`sampler` with JAX's keyword-only out_sharding argument."""
    @functools.wraps(sampler)
    def sample(*args, out_sharding=None, **kwargs):
        if _splits(out_sharding):
            raise NotImplementedError(f"jax.random.{sampler.__name__}: out_sharding={out_sharding!r} splits the "
                                      f"result over devices, which xjax does not support")
        return sampler(*args, **kwargs)

    return sample
